/* The Check suites, one per module, collected by tests/unit.c. */
#ifndef PC_UNIT_H
#define PC_UNIT_H

#include <check.h>

Suite *gmon_suite(void);
Suite *profil_suite(void);
Suite *stats_suite(void);

/* Whether the shell command shell_test succeeds (it is run with system(3)). */
int unit_have(const char *shell_test);

/* Notes that a suite left test out, and why; tests/unit.c reports it. */
void unit_skip(const char *test, const char *reason);

#endif
