int a(int);
int b(int x) { return x ? a(x - 1) : 1; }
