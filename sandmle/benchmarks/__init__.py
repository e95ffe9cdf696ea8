"""sandmle.benchmarks"""
