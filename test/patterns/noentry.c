/* Test fixture of `vtrace patterns --plugin`: a shared object without the entry point. */
int vtrace_not_a_plugin(void);
int vtrace_not_a_plugin(void)
{
    return 42;
}
