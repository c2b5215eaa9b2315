/* The two things MACE Micro's sample program needs from a board: print a line, stop. */
#ifndef MACE_MICRO_PORT_H_
#define MACE_MICRO_PORT_H_

/* Writes the NUL-terminated string s (the host's stdout; Arm semihosting's SYS_WRITE0). */
void mace_micro_port_puts(const char *s);

/* Ends the program with status `code` (0: success); does not return. */
void mace_micro_port_exit(int code);

#endif /* MACE_MICRO_PORT_H_ */
