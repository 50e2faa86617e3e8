/* The Check suites, one per module, collected by tests/unit.c. */
#ifndef PC_UNIT_H
#define PC_UNIT_H

#include <check.h>

Suite *gmon_suite(void);
Suite *profil_suite(void);

#endif
