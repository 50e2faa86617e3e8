/* Runs every Check suite; the exit status is 0 only when all pass. */
#include <stdlib.h>

#include "unit.h"

int
main(void)
{
	SRunner *sr = srunner_create(gmon_suite());
	int failed;

	srunner_add_suite(sr, profil_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
