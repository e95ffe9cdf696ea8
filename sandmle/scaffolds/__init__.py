"""sandmle.scaffolds"""
