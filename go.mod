module github.com/toposcope/toposcope

go 1.26
