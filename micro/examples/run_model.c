/* MACE Micro's sample program: runs a converted model once on the test input that
 * `mace micro --input_data x.npy` wrote into <name>_input.c, and prints the status and every
 * output value as its IEEE-754 bits in hex (exact, and no printf or float formatting needed). */
#include <stdint.h>
#include <string.h>

#include "port.h"

/* Defined in the generated <name>_input.c. */
extern const float mace_micro_test_input[];
extern float mace_micro_test_output[];
extern const uint32_t mace_micro_test_output_size;
int mace_micro_test_run(const float *in, float *out);

static void put_hex(uint32_t v, char *buf) {
  static const char digits[] = "0123456789abcdef";
  int i;
  for (i = 7; i >= 0; --i) {
    buf[i] = digits[v & 15u];
    v >>= 4;
  }
}

int main(void) {
  char line[24];
  uint32_t i, bits;
  int status = mace_micro_test_run(mace_micro_test_input, mace_micro_test_output);
  memcpy(line, "status ", 7);
  line[7] = (char)('0' + (status >= 0 && status < 10 ? status : 9));
  line[8] = '\n';
  line[9] = '\0';
  mace_micro_port_puts(line);
  for (i = 0; status == 0 && i < mace_micro_test_output_size; ++i) {
    memcpy(&bits, &mace_micro_test_output[i], sizeof bits);
    memcpy(line, "y ", 2);
    put_hex(bits, line + 2);
    line[10] = '\n';
    line[11] = '\0';
    mace_micro_port_puts(line);
  }
  mace_micro_port_puts("done\n");
  return status;
}
