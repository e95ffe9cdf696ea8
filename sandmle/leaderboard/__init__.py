"""sandmle.leaderboard"""
