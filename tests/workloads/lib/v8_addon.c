// build: gcc -O2 -g -shared -fPIC -fno-optimize-sibling-calls -I/usr/include/node
/*
 * A Node.js native addon (N-API, loaded with process.dlopen by
 * tests/workloads/v8/v8_shapes.js's addon case): JavaScript calls
 * callBack(fn, n), C calls fn n times: addonMain (JS) -> addon_call_back ->
 * addon_inner (C) -> jsLeaf (JS).
 */
#include <node_api.h>

__attribute__((noinline)) void addon_inner(napi_env env, napi_value fn, int n)
{
	napi_value global, result;

	if (napi_get_global(env, &global) != napi_ok)
		return;
	for (int i = 0; i < n; i++)
		if (napi_call_function(env, global, fn, 0, NULL, &result) != napi_ok)
			return;
	__asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
}

__attribute__((noinline)) napi_value addon_call_back(napi_env env, napi_callback_info info)
{
	napi_value args[2];
	size_t argc = 2;
	int32_t n = 0;

	if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 2 ||
	    napi_get_value_int32(env, args[1], &n) != napi_ok)
		return NULL;
	addon_inner(env, args[0], n);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

NAPI_MODULE_INIT()
{
	napi_value fn;

	if (napi_create_function(env, "callBack", NAPI_AUTO_LENGTH, addon_call_back, NULL, &fn) !=
		napi_ok ||
	    napi_set_named_property(env, exports, "callBack", fn) != napi_ok)
		return NULL;
	return exports;
}
