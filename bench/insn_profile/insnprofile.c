/* insnprofile: a QEMU TCG plugin (API version 1, QEMU 7.x) that counts guest
 * instructions per translation block, written at exit as "vaddr count" lines
 * (count = executions x instructions of the block) to the file named by out=.
 * insn_profile.py (same folder) maps the addresses to the binary's functions.
 * Like ../shared/tools/insncount, it declares the few functions of QEMU's
 * plugin API (version 1) itself, so no QEMU headers are needed:
 *   cc -O2 -shared -fPIC -o /tmp/libinsnprofile.so bench/insn_profile/insnprofile.c */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct {
  const char *target_name;
  struct { int min; int cur; } version;
  bool system_emulation;
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t, void *);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, qemu_plugin_vcpu_udata_cb_t,
                                                 enum qemu_plugin_cb_flags, void *);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, qemu_plugin_udata_cb_t, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One record per translation; a block translated again gets another record
 * (the report adds them up by address). Counts from several threads may race:
 * profile with one thread. */
typedef struct Block {
  uint64_t vaddr, n_insns, execs;
  struct Block *next;
} Block;
static Block *blocks;
static char out_path[512];

static void on_exec(unsigned int vcpu, void *udata) { (void)vcpu; ((Block *)udata)->execs++; }

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  Block *b = calloc(1, sizeof *b);
  if (!b) return;
  b->vaddr = qemu_plugin_tb_vaddr(tb);
  b->n_insns = qemu_plugin_tb_n_insns(tb);
  b->next = blocks;
  blocks = b;
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void on_exit_report(qemu_plugin_id_t id, void *unused) {
  (void)id; (void)unused;
  FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
  if (!f) return;
  for (Block *b = blocks; b; b = b->next)
    if (b->execs)
      fprintf(f, "%llx %llu %llu\n", (unsigned long long)b->vaddr, (unsigned long long)(b->execs * b->n_insns),
              (unsigned long long)b->n_insns);
  if (f != stderr) fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                              int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++)
    if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit_report, NULL);
  return 0;
}
