/* Prints the limiter's hook table, one name per line (for the export check). */
#include <stdio.h>

int main(void) {
#define TL_HOOK(name, group) puts(#name);
#include "hooks.def"
#undef TL_HOOK
  return 0;
}
