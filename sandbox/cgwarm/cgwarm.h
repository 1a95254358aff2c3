#ifndef TETHER_CGWARM_H
#define TETHER_CGWARM_H

#include <stddef.h>

int cgwarm_procs_file(const char *proc_cgroup, const char *sysroot, char *out, size_t len);
void cgwarm_prime(void);
int cgwarm_wanted(int argc, char **argv, const char *env_state_root);

#endif
