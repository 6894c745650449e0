# src/model: the prediction model shared by the run time and the analyses (model.md):
# parameters and kinds of calls (model), min-plus polynomials (poly), the symbolic rules
# (symbolic), the model's events (event.h) and one rank's reduction (rankreduce).
# Includes src/format and src/util only.
vt_model_sources = \
	src/model/model.c src/model/model.h src/model/event.h \
	src/model/poly.c src/model/poly.h \
	src/model/symbolic.c src/model/symbolic.h \
	src/model/rankreduce.c src/model/rankreduce.h
