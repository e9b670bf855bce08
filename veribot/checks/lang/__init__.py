"""Language front ends: parsing, code facts and solver models, one module per language."""
