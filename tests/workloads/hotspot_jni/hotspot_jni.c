// build: see HotspotJni.java (the test builds it with the JDK's headers)
// The native half of HotspotJni: a JNI method that calls back into Java.
#include <jni.h>

static jmethodID callback;

__attribute__((noinline)) static jlong call_back(JNIEnv *env, jclass cls, jlong x)
{
	return (*env)->CallStaticLongMethod(env, cls, callback, x);
}

JNIEXPORT jlong JNICALL Java_HotspotJni_viaNative(JNIEnv *env, jclass cls, jlong x)
{
	if (!callback)
		callback = (*env)->GetStaticMethodID(env, cls, "callback", "(J)J");
	return call_back(env, cls, x) + 1;
}
