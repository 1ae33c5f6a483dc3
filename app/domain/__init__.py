"""Pure numerical core of absrank: numpy, scipy, the standard library and cocoex only."""
