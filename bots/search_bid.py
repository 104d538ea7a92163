"""Bidding and raising of the ``search`` bot."""

from __future__ import annotations


def choose_trump(bot, view, legal):
    return bot.robot.choose_trump(view, legal)


def choose_talon(bot, view, legal):
    return bot.robot.choose_talon(view, legal)


def choose_answer(bot, view, legal):
    return bot.robot.choose_answer(view, legal)


def choose_contract(bot, view, legal):
    return bot.robot.choose_contract(view, legal)


def choose_flek(bot, view, legal):
    return bot.robot.choose_flek(view, legal)
