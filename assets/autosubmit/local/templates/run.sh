# One run: test = member, lb-iteration = chunk - 1, repetition = split. A no-op once recorded
# or when the test or the campaign has finished.
"%AUTOLB.BIN%" campaign exec "%AUTOLB.CAMPAIGN%" --iteration $((%CHUNK% - 1)) --test %MEMBER% --repetition %SPLIT% -- "%AUTOLB.BIN%" simulate --campaign "%AUTOLB.CAMPAIGN%" --run {run}
