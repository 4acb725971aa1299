module example.com/nested

go 1.26.0

require example.com/fixture v0.0.0

replace example.com/fixture => ../
