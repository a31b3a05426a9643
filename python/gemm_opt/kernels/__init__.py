"""The schedule GEMM kernels: built once per configuration, cached, run on the model or bundled.

``schedule_gemm`` builds the tile IR of a schedule kernel (``build_gemm_module``);
``cache`` keeps built modules in memory and runs them on the executable model;
``build_bundles`` compiles the configurations the API launches on the GPU into
bundle files under ``bundles/<target>/``. Importing this package imports nothing:
the compiler loads only when a kernel is built.
"""
