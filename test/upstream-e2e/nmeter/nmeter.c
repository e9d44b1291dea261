/*
Copyright The podadmission Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

/*
 * nmeter stands in for busybox's nmeter applet, which the docker library
 * busybox image has and Debian's busybox-static does not build, in the
 * images upstream's node e2e suite runs here. It does what the suite asks
 * of it (test/e2e_node/container_lifecycle_pod_construction.go:
 * `nmeter -d0 '%3t' | head -n1`, the time of day with milliseconds) and
 * refuses any other directive, so that a test that needs more fails
 * naming it instead of reading a wrong value:
 *
 *   nmeter [-d MSEC] FORMAT
 *
 * FORMAT is printed every MSEC milliseconds (default 1000; 0 without a
 * pause) until the output is closed, with %t the time of day (hh:mm:ss),
 * %Nt the same with N (1 to 6) decimals of the second, and %% a percent
 * sign; any other character is printed as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int print_time(int decimals) {
	struct timeval tv;
	struct tm tm;
	long fraction = 0;
	int i;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	if (printf("%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec) < 0)
		return -1;
	if (decimals == 0)
		return 0;
	fraction = tv.tv_usec;
	for (i = decimals; i < 6; i++)
		fraction /= 10;
	return printf(".%0*ld", decimals, fraction) < 0 ? -1 : 0;
}

/* line prints format once; -1 when the output is gone. */
static int line(const char *format) {
	const char *p;

	for (p = format; *p; p++) {
		if (*p != '%') {
			if (putchar(*p) == EOF)
				return -1;
			continue;
		}
		p++;
		if (*p == '%') {
			if (putchar('%') == EOF)
				return -1;
		} else if (*p == 't') {
			if (print_time(0) < 0)
				return -1;
		} else if (*p >= '1' && *p <= '6' && p[1] == 't') {
			if (print_time(*p - '0') < 0)
				return -1;
			p++;
		} else {
			fprintf(stderr, "nmeter: unsupported directive %%%s in %s: this stand-in supports %%t, %%Nt and %%%%\n", p, format);
			exit(1);
		}
	}
	if (putchar('\n') == EOF || fflush(stdout) == EOF)
		return -1;
	return 0;
}

int main(int argc, char **argv) {
	long delay = 1000;
	int opt;
	char *end;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: nmeter [-d MSEC] FORMAT\n");
			return 1;
		}
		errno = 0;
		delay = strtol(optarg, &end, 10);
		if (errno != 0 || *end != '\0' || delay < 0) {
			fprintf(stderr, "nmeter: -d %s: want milliseconds, 0 or more\n", optarg);
			return 1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: nmeter [-d MSEC] FORMAT\n");
		return 1;
	}
	for (;;) {
		if (line(argv[optind]) < 0)
			return 0;
		if (delay > 0)
			usleep(delay * 1000);
	}
}
