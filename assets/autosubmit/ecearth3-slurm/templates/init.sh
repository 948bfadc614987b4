# Create the campaign; a retried job finds it there and succeeds.
"%AUTOLB.BIN%" campaign init "%AUTOLB.CAMPAIGN%" --config "%AUTOLB.ASSETS%/autosubmit/ecearth3-slurm/campaign.toml" --if-absent
