/* SPDX-License-Identifier: Apache-2.0 */
/* The release this build is: printed by `--version`, sent as the OTLP scope version. */
#ifndef OMNIPROF_UTIL_VERSION_H
#define OMNIPROF_UTIL_VERSION_H

#define OMNIPROF_VERSION "0.1.0"

#endif
