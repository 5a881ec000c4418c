"""flce's Python side: the subjects flce runs, behind one entry point.

flce runs them in a child process, `python -m flce_subjects.subprocess_worker` with
<flce>/subjects on PYTHONPATH (oracles/subject_worker.cpp starts it), which calls
flce_subjects.runner.run(case, tensors, subject, mode, backend, subject_path) per request.
Importing this package imports nothing else (torch is loaded by runner/subjects).
"""
