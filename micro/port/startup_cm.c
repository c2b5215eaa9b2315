/* Cortex-M start-up for the MPS2 boards under QEMU: vector table, .data copy, .bss zeroing,
 * FPU enable, main(), semihosting exit with main's status (linker script: port/mps2.ld). */
#include <stdint.h>

#include "port.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);

void mace_micro_reset_handler(void);
void mace_micro_fault_handler(void);

void mace_micro_reset_handler(void) {
  uint32_t *src = &_sidata, *dst = &_sdata;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss; ++dst) *dst = 0;
  /* CPACR: full access to CP10/CP11 (the FPU) before any floating-point instruction runs. */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  mace_micro_port_exit(main());
}

/* A fault stops the program with a non-zero status instead of hanging the emulator. */
void mace_micro_fault_handler(void) {
  mace_micro_port_puts("mace micro: fault\n");
  mace_micro_port_exit(3);
}

typedef void (*mace_micro_vector)(void);

/* Initial stack pointer, then reset, NMI, HardFault, MemManage, BusFault, UsageFault. */
__attribute__((section(".isr_vector"), used)) const mace_micro_vector mace_micro_vectors[16] = {
    (mace_micro_vector)(uintptr_t)&_estack, mace_micro_reset_handler, mace_micro_fault_handler,
    mace_micro_fault_handler, mace_micro_fault_handler, mace_micro_fault_handler,
    mace_micro_fault_handler, 0, 0, 0, 0, mace_micro_fault_handler, mace_micro_fault_handler, 0,
    mace_micro_fault_handler, mace_micro_fault_handler};
