// SPDX-License-Identifier: Apache-2.0
/*
 * The language runtimes omniprof walks, one line each, in the order they are
 * tried on a process. Adding a runtime: its folder under src/interp/, its
 * row in omniprof/frame_kinds.h, its BPF header, and one line here.
 */
#include "interp/interp.h"

#include "interp/hotspot/hotspot.h"
#include "interp/perl/perl.h"
#include "interp/php/php.h"
#include "interp/python/python.h"
#include "interp/ruby/ruby.h"
#include "interp/v8/v8.h"

const struct interp_ops *const interp_registry[] = {
    &python_interp_ops,
    &ruby_interp_ops,
    &hotspot_interp_ops,
    &perl_interp_ops,
    &v8_interp_ops,
    &php_interp_ops,
};

const size_t interp_registry_len = sizeof(interp_registry) / sizeof(interp_registry[0]);
