"""Finding text by meaning and by words: the embedders (bundled model, OpenAI-compatible API, n-gram hash),
their calibration, and hybrid fusion of the dense and lexical lanes."""
