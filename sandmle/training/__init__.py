"""sandmle.training"""
