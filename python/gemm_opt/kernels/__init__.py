"""Kernel builders: tile modules of whole kernels, built with the dialect's op builders."""
