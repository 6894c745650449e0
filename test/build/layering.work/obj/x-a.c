int b(int);
int a(int x) { return x ? b(x - 1) : 0; }
