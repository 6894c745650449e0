# Compiler wrappers, the MPICH profile configuration and the module file: made from
# templates at build time, so they carry the final installation paths.
bin_SCRIPTS += src/wrappers/mpicc src/wrappers/mpicxx src/wrappers/mpifort src/wrappers/mpiexec
nodist_sysconf_DATA = etc/vtrace.conf
modulefiledir = $(datadir)/modulefiles/vtrace
nodist_modulefile_DATA = etc/$(PACKAGE_VERSION)
# CMake package configuration: find_package(vtrace), the target vtrace::vtrace
cmakeconfigdir = $(libdir)/cmake/vtrace
nodist_cmakeconfig_DATA = etc/cmake/vtrace-config.cmake etc/cmake/vtrace-config-version.cmake
EXTRA_DIST += src/wrappers/mpicc.in src/wrappers/mpiexec.in etc/vtrace.conf.in etc/modulefile.in etc/cmake/vtrace-config.cmake.in \
	etc/cmake/vtrace-config-version.cmake.in
CLEANFILES += src/wrappers/mpicc src/wrappers/mpicxx src/wrappers/mpifort src/wrappers/mpiexec etc/vtrace.conf etc/$(PACKAGE_VERSION) \
	etc/cmake/vtrace-config.cmake etc/cmake/vtrace-config-version.cmake

vt_subst = sed -e 's|@libdir[@]|$(libdir)|g' -e 's|@prefix[@]|$(prefix)|g' \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' -e 's|@MPICH_SYSCONFDIR[@]|$(MPICH_SYSCONFDIR)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' -e 's|@bindir[@]|$(bindir)|g' -e 's|@MPI_CC[@]|$(MPI_CC)|g' \
	-e 's|@VT_MPI_DESC[@]|$(VT_MPI_DESC)|g' -e 's|@MPI_MODULE[@]|$(MPI_MODULE)|g' -e 's|@VT_MPI[@]|$(VT_MPI)|g'

src/wrappers/mpicc: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpicc|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_CC)|g' -e 's|@VT_EXTRA_LDFLAGS[@]||g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
src/wrappers/mpicxx: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpicxx|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_CXX)|g' -e 's|@VT_EXTRA_LDFLAGS[@]||g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
src/wrappers/mpifort: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpifort|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_FC)|g' -e 's|@VT_EXTRA_LDFLAGS[@]|$(VT_FC_LDFLAGS)|g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
src/wrappers/mpiexec: src/wrappers/mpiexec.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_REAL_MPIEXEC[@]|$(MPIEXEC)|g' \
	  $(srcdir)/src/wrappers/mpiexec.in > $@ && chmod +x $@
etc/vtrace.conf: etc/vtrace.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && $(vt_subst) $(srcdir)/etc/vtrace.conf.in > $@
etc/cmake/vtrace-config.cmake: etc/cmake/vtrace-config.cmake.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc/cmake && $(vt_subst) $(srcdir)/etc/cmake/vtrace-config.cmake.in > $@
etc/cmake/vtrace-config-version.cmake: etc/cmake/vtrace-config-version.cmake.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc/cmake && $(vt_subst) $(srcdir)/etc/cmake/vtrace-config-version.cmake.in > $@
# the module file keeps its prereq line when configure named the MPI's module, else its comment
etc/$(PACKAGE_VERSION): etc/modulefile.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && if test -n "$(MPI_MODULE)"; then drop=NO_MODULE; else drop=MODULE; fi && \
	  $(vt_subst) -e "/@VT_IF_$${drop}[@]/d" -e 's/ *@VT_IF_[A-Z_]*[@]//' $(srcdir)/etc/modulefile.in > $@

if INSTALL_MPICH_PROFILE
install-data-local: etc/vtrace.conf
	$(MKDIR_P) $(DESTDIR)$(MPICH_PROFILE_DIR)
	$(INSTALL_DATA) etc/vtrace.conf $(DESTDIR)$(MPICH_PROFILE_DIR)/vtrace.conf
uninstall-local:
	rm -f $(DESTDIR)$(MPICH_PROFILE_DIR)/vtrace.conf
endif
