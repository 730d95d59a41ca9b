// SPDX-License-Identifier: MIT
// consumer.cpp - consumer.c compiled as C++: the public header (single or
// installed) must work in a C++ program, warning-free. The implementation
// comes from a C translation unit (impl.c) or from the installed library.
#include "consumer.c"
