"""flce's Python side: the subjects the C++ host runs, behind one entry point.

The host embeds CPython with /work/main/subjects on sys.path and calls
flce_subjects.runner.run(case, tensors, subject, mode, backend, subject_path).
Importing this package imports nothing else (torch is loaded by runner/subjects).
"""
