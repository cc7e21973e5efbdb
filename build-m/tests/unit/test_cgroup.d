build-m/tests/unit/test_cgroup: tests/unit/test_cgroup.c \
 src/proc/cgroup.h
src/proc/cgroup.h:
