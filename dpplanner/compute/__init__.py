"""What the window computes, without Qt: job functions over the engine and the engine child process.

``jobs`` holds the immutable requests and results and the plain functions the GUI's compute
controller runs; ``engine_process`` runs those functions in a child process. Neither imports Qt
(tests/test_no_qt.py), so scripts and tests can run the same jobs headless.
"""
