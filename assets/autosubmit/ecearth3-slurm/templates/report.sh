# The iteration table and the best configuration; fails if the campaign needed more chunks.
"%AUTOLB.BIN%" campaign status "%AUTOLB.CAMPAIGN%"
"%AUTOLB.BIN%" campaign wait "%AUTOLB.CAMPAIGN%" --iteration %EXPERIMENT.NUMCHUNKS% --timeout 0
