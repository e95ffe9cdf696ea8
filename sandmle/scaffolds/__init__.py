"""Agent scaffolds as Inspect solvers: ReAct, AIDE and AIRA's greedy, MCTS and evolution."""

from sandmle.scaffolds.aide import aide
from sandmle.scaffolds.aira import aira_evo, aira_greedy, aira_mcts
from sandmle.scaffolds.react import react

__all__ = ["aide", "aira_evo", "aira_greedy", "aira_mcts", "react"]
