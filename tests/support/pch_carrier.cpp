// Nothing of its own: the object that builds the test suites' precompiled
// header (tests/CMakeLists.txt, engine_test_pch), which every suite reuses.
