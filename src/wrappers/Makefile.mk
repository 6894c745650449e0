# Compiler wrappers, the MPICH profile configuration and the module file: made from
# templates at build time, so they carry the final installation paths.
bin_SCRIPTS += src/wrappers/mpicc src/wrappers/mpicxx src/wrappers/mpifort
nodist_sysconf_DATA = etc/vtrace.conf
modulefiledir = $(datadir)/modulefiles/vtrace
nodist_modulefile_DATA = etc/$(PACKAGE_VERSION)
EXTRA_DIST += src/wrappers/mpicc.in etc/vtrace.conf.in etc/modulefile.in
CLEANFILES += src/wrappers/mpicc src/wrappers/mpicxx src/wrappers/mpifort etc/vtrace.conf etc/$(PACKAGE_VERSION)

vt_subst = sed -e 's|@libdir[@]|$(libdir)|g' -e 's|@prefix[@]|$(prefix)|g' \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' -e 's|@MPICH_SYSCONFDIR[@]|$(MPICH_SYSCONFDIR)|g'

src/wrappers/mpicc: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpicc|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_CC)|g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
src/wrappers/mpicxx: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpicxx|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_CXX)|g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
src/wrappers/mpifort: src/wrappers/mpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/wrappers && $(vt_subst) -e 's|@VT_WRAPPER_NAME[@]|mpifort|g' \
	  -e 's|@VT_REAL_WRAPPER[@]|$(MPI_FC)|g' $(srcdir)/src/wrappers/mpicc.in > $@ && chmod +x $@
etc/vtrace.conf: etc/vtrace.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && $(vt_subst) $(srcdir)/etc/vtrace.conf.in > $@
etc/$(PACKAGE_VERSION): etc/modulefile.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && $(vt_subst) $(srcdir)/etc/modulefile.in > $@

if INSTALL_MPICH_PROFILE
install-data-local: etc/vtrace.conf
	$(MKDIR_P) $(DESTDIR)$(MPICH_PROFILE_DIR)
	$(INSTALL_DATA) etc/vtrace.conf $(DESTDIR)$(MPICH_PROFILE_DIR)/vtrace.conf
uninstall-local:
	rm -f $(DESTDIR)$(MPICH_PROFILE_DIR)/vtrace.conf
endif
