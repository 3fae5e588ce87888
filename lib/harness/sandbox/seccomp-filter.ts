/**
 * The seccomp filter every strict and lenient sandbox command runs under, compiled here to the classic BPF program
 * bubblewrap's `--seccomp FD` loads (an array of `struct sock_filter`, 8 bytes each, little-endian like both
 * architectures it serves). No libseccomp: the program is small enough to assemble by hand and read.
 *
 * What it refuses, with EPERM, on x86_64 and aarch64:
 * - mounts and the new mount API (mount, umount2, pivot_root, fsopen, fsconfig, fsmount, fspick, move_mount,
 *   open_tree, mount_setattr): the sandbox's file system is fixed once bubblewrap built it;
 * - namespaces: unshare and setns, and clone with any CLONE_NEW* flag (bubblewrap's `--disable-userns` also makes
 *   a new user namespace fail with ENOSPC); clone3 answers ENOSYS, because its flags live in memory a filter cannot
 *   read, and glibc then falls back to clone;
 * - the kernel keyring (keyctl, add_key, request_key), bpf, perf_event_open, userfaultfd, io_uring (setup, enter,
 *   register): large attack surface, no use to a task's tests;
 * - other processes' memory (ptrace, process_vm_readv, process_vm_writev, pidfd_getfd);
 * - the machine (init_module, finit_module, delete_module, kexec_load, kexec_file_load, reboot, swapon, swapoff,
 *   acct, quotactl, quotactl_fd, syslog, open_by_handle_at, settimeofday, clock_settime, clock_adjtime, adjtimex,
 *   and on x86_64 iopl and ioperm);
 * - every x32 system call (x86_64 numbers with bit 30 set).
 * A system call of any other architecture (i386 through `int 0x80`, arm32 compat) kills the process: its numbers
 * mean other calls, so the list above would not hold for them.
 *
 * Numbers are from the kernel's tables (`arch/x86/entry/syscalls/syscall_64.tbl` for x86_64,
 * `include/uapi/asm-generic/unistd.h` for aarch64), as the system headers here also give them.
 */

/** `AUDIT_ARCH_*` values from `<linux/audit.h>`: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
export const AUDIT_ARCH_AARCH64 = 0xc00000b7;
const X32_SYSCALL_BIT = 0x40000000;

const EPERM = 1;
const ENOSYS = 38;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

/** The system calls refused with EPERM, by name, with their numbers on each architecture (undefined: none there). */
export const DENIED_SYSCALLS: Readonly<Record<string, { x86_64?: number; aarch64?: number }>> = {
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  unshare: { x86_64: 272, aarch64: 97 },
  setns: { x86_64: 308, aarch64: 268 },
  keyctl: { x86_64: 250, aarch64: 219 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  pidfd_getfd: { x86_64: 438, aarch64: 438 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  reboot: { x86_64: 169, aarch64: 142 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  acct: { x86_64: 163, aarch64: 89 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  syslog: { x86_64: 103, aarch64: 116 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  settimeofday: { x86_64: 164, aarch64: 170 },
  clock_settime: { x86_64: 227, aarch64: 112 },
  clock_adjtime: { x86_64: 305, aarch64: 266 },
  adjtimex: { x86_64: 159, aarch64: 171 },
  iopl: { x86_64: 172 },
  ioperm: { x86_64: 173 },
};

/** clone and clone3, checked apart (flags). */
const CLONE = { x86_64: 56, aarch64: 220 } as const;
const CLONE3 = { x86_64: 435, aarch64: 435 } as const;

// Classic BPF opcodes (<linux/bpf_common.h>).
const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

// Offsets in `struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }`.
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of args[0] (little-endian). */
const OFFSET_ARG0_LOW = 16;

type Instruction =
  | { op: 'ld'; offset: number }
  | { op: 'ret'; value: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; then: string; else?: string }
  | { op: 'label'; name: string };

function assemble(program: Instruction[]): Buffer {
  const labels = new Map<string, number>();
  let index = 0;
  for (const ins of program) {
    if (ins.op === 'label') labels.set(ins.name, index);
    else index++;
  }
  const out = Buffer.alloc(index * 8);
  let at = 0;
  const target = (name: string | undefined, from: number): number => {
    if (name === undefined) return 0;
    const to = labels.get(name);
    if (to === undefined) throw new Error(`seccomp: unknown label ${name}`);
    const offset = to - from - 1;
    if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${name} out of range (${offset})`);
    return offset;
  };
  for (const ins of program) {
    if (ins.op === 'label') continue;
    let code: number;
    let jt = 0;
    let jf = 0;
    let k: number;
    if (ins.op === 'ld') {
      code = BPF_LD_W_ABS;
      k = ins.offset;
    } else if (ins.op === 'ret') {
      code = BPF_RET_K;
      k = ins.value;
    } else {
      code = ins.op === 'jeq' ? BPF_JMP_JEQ_K : ins.op === 'jge' ? BPF_JMP_JGE_K : BPF_JMP_JSET_K;
      k = ins.k;
      jt = target(ins.then, at);
      jf = target(ins.else, at);
    }
    out.writeUInt16LE(code, at * 8);
    out.writeUInt8(jt, at * 8 + 2);
    out.writeUInt8(jf, at * 8 + 3);
    out.writeUInt32LE(k >>> 0, at * 8 + 4);
    at++;
  }
  return out;
}

function archBlock(arch: 'x86_64' | 'aarch64'): Instruction[] {
  const block: Instruction[] = [{ op: 'label', name: arch }, { op: 'ld', offset: OFFSET_NR }];
  if (arch === 'x86_64') block.push({ op: 'jge', k: X32_SYSCALL_BIT, then: 'eperm' });
  for (const numbers of Object.values(DENIED_SYSCALLS)) {
    const nr = numbers[arch];
    if (nr !== undefined) block.push({ op: 'jeq', k: nr, then: 'eperm' });
  }
  block.push({ op: 'jeq', k: CLONE3[arch], then: 'enosys' }, { op: 'jeq', k: CLONE[arch], then: 'clone' }, { op: 'ret', value: SECCOMP_RET_ALLOW });
  return block;
}

/**
 * The compiled filter (see the module's comment for what it refuses).
 *
 * @example
 * writeFileSync(path, seccompProgram());   // then: bwrap --seccomp 3 … 3<path
 */
export function seccompProgram(): Buffer {
  return assemble([
    { op: 'ld', offset: OFFSET_ARCH },
    { op: 'jeq', k: AUDIT_ARCH_X86_64, then: 'x86_64' },
    { op: 'jeq', k: AUDIT_ARCH_AARCH64, then: 'aarch64' },
    { op: 'ret', value: SECCOMP_RET_KILL_PROCESS },
    ...archBlock('x86_64'),
    ...archBlock('aarch64'),
    { op: 'label', name: 'clone' },
    { op: 'ld', offset: OFFSET_ARG0_LOW },
    { op: 'jset', k: CLONE_NAMESPACE_FLAGS, then: 'eperm' },
    { op: 'ret', value: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', value: SECCOMP_RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'ret', value: SECCOMP_RET_ERRNO | ENOSYS },
  ]);
}
