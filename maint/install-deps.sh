#!/bin/sh
# Installs the Debian packages vtrace needs to build, test and run (Debian 12).
set -e
pkgs="build-essential autoconf automake libtool pkg-config python3 mpich libmpich-dev gfortran
      openmpi-bin libopenmpi-dev
      libhwloc-dev libzstd-dev zlib1g-dev libcmocka-dev libdw-dev
      libotf2-trace-dev otf2-tools python3-otf2 python3-six
      clang zstd time"
# python3-six: Debian 13's python3-otf2 imports six without depending on it
# cmake and a module system: the site install's test (test/build/site_install.sh; Debian's
# lmod and environment-modules conflict, the test takes either)
pkgs="$pkgs cmake environment-modules"
# unmodified Debian-packaged MPI programs traced through LD_PRELOAD (test/mpi/app_*.sh):
# NetPIPE built for MPICH, HPC Challenge and LAMMPS (with its examples) built for Open MPI
pkgs="$pkgs netpipe-mpich2 hpcc lammps lammps-examples"
# headless Chromium renders the page of vtrace report in its test (test/report)
pkgs="$pkgs chromium chromium-driver"
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
${SUDO:-} apt-get update -qq
# shellcheck disable=SC2086
${SUDO:-} apt-get install -y -qq $pkgs > /dev/null
