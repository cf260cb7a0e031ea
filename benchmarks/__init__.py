"""inspect_gaia's benchmarks, run as modules from the repository root.

``python -m benchmarks.run`` (against evalscope, at GAIA size, per sample),
``python -m benchmarks.egress``, ``python -m benchmarks.load_cpu`` and
``python -m benchmarks.view_file_memory``; the scripted model they serve is ``support``'s.
``evalscope_driver.py`` alone runs by path, under evalscope's own interpreter.
"""
