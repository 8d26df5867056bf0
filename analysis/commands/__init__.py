"""Commands: the command lines (report, compare, scaling, drift) and the DataFrames (frames), each
reading through the read stage and writing what the lower stages made."""
