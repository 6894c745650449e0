/* Built with --disable-vtrace: the library defines no MPI function, so a program
 * linked with it runs on MPI exactly as without vtrace. */
int vt_disabled(void);
int vt_disabled(void) { return 1; }
