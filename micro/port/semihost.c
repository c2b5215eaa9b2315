/* The sample program's board layer on Cortex-M under a debugger or QEMU: Arm semihosting
 * (SYS_WRITE0 to print, SYS_EXIT to stop; `bkpt 0xab` is the M-profile trap). */
#include <stdint.h>

#include "port.h"

#define SEMIHOST_SYS_WRITE0 0x04
#define SEMIHOST_SYS_EXIT 0x18
#define SEMIHOST_APPLICATION_EXIT 0x20026 /* ADP_Stopped_ApplicationExit: status 0 */
#define SEMIHOST_RUNTIME_ERROR 0x20023    /* ADP_Stopped_RunTimeErrorUnknown: status 1 */

static uint32_t semihost_call(uint32_t op, const void *arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void mace_micro_port_puts(const char *s) { (void)semihost_call(SEMIHOST_SYS_WRITE0, s); }

void mace_micro_port_exit(int code) {
  const uint32_t reason = code == 0 ? SEMIHOST_APPLICATION_EXIT : SEMIHOST_RUNTIME_ERROR;
  for (;;) (void)semihost_call(SEMIHOST_SYS_EXIT, (const void *)(uintptr_t)reason);
}
