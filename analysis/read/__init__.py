"""Read: the only stage that opens a file. Result files are read in a forked child (reader.in_child),
so a file that crashes the HDF5 library costs that file only; meter logs are read as CSV."""
