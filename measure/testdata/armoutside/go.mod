module example.com/armoutside

go 1.26.0

require github.com/shakenfist/quicbench v0.0.0

replace github.com/shakenfist/quicbench => ../../..
