"""Test support: helpers the tests share. Not part of the installed package."""
