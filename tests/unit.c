/*
 * Runs every Check suite; the exit status is 0 only when all pass. Check has
 * no skipped outcome, so a suite leaves out a test whose tool is missing
 * (unit_skip), and this prints what was left out and why. Under CI=true a
 * skip is a failure: .ci/run installs every tool the tests use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static int nskipped;

int
unit_have(const char *shell_test)
{
	return system(shell_test) == 0;
}

void
unit_skip(const char *test, const char *reason)
{
	fprintf(stderr, "unit: skip %s: %s\n", test, reason);
	nskipped++;
}

int
main(void)
{
	SRunner *sr = srunner_create(gmon_suite());
	const char *ci = getenv("CI");
	int failed;

	srunner_add_suite(sr, profil_suite());
	srunner_add_suite(sr, stats_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (nskipped && ci && strcmp(ci, "true") == 0) {
		printf("unit: %d skipped, which CI=true counts as failed\n", nskipped);
		return EXIT_FAILURE;
	}
	if (nskipped)
		printf("unit: %d skipped\n", nskipped);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
