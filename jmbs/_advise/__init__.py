"""Design advice: releases that make an overconstrained mechanism statically determinate."""
