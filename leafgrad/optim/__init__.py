"""``leafgrad.optim``: optimizers and learning-rate schedules, as ``torch.optim``."""

from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .adaptive import ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "Adamax",
    "AdamW",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "lr_scheduler",
    "swa_utils",
]
