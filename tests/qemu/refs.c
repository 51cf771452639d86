/* A program whose reference stream is known exactly, for the QEMU sampler's
 * exact test: no C library, no compiler-generated memory accesses, only
 * the loop below. Each of K passes walks N lines of buf, and per line makes
 * (by lackey's reference definition, which the sampler follows):
 *   a load                        1 reference
 *   an add to memory (load+store) 1 (a modify)
 *   an 8-byte load crossing into the next line   2
 *   a 16-byte load (QEMU splits it in two)        1
 *   a push, and after the next a pop    2 (one stack line; valgrind drops a
 *                                   pop's load right after its push)
 *   rep stosb of 4 bytes          4 (one per iteration)
 * = 11 references per line; K * N * 11 in all, over N + 2 distinct lines
 * (buf's N lines, the line after them, the stack's line). */
#define N 64
#define K 10

__asm__(".globl _start\n"
        "_start:\n"
        "  lea buf(%rip), %rbx\n"
        "  mov $"
        "10"
        ", %r12\n"
        "1:\n"
        "  xor %r13, %r13\n"
        "2:\n"
        "  mov (%rbx,%r13), %rax\n"
        "  addq $1, 8(%rbx,%r13)\n"
        "  mov 60(%rbx,%r13), %rdx\n"
        "  movdqu 16(%rbx,%r13), %xmm0\n"
        "  push %rax\n"
        "  lea 32(%rbx,%r13), %rdi\n"
        "  mov $4, %ecx\n"
        "  xor %eax, %eax\n"
        "  rep stosb\n"
        "  pop %rax\n"
        "  add $64, %r13\n"
        "  cmp $"
        "4096"
        ", %r13\n"
        "  jne 2b\n"
        "  dec %r12\n"
        "  jnz 1b\n"
        "  mov $60, %eax\n"
        "  xor %edi, %edi\n"
        "  syscall\n"
        ".bss\n"
        ".balign 64\n"
        "buf: .zero 4224\n");

_Static_assert(N * 64 == 4096 && K == 10, "the loop's constants above");
