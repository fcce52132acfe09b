"""simready-benchmark test pack (entry point ``simready_benchmark.tests``): NVIDIA's FET022 test
declared for mimic_ext's engines. simready-benchmark imports every module of this folder."""
